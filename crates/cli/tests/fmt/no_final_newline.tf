locals {
  a=1
}