locals {
  a 1
}
