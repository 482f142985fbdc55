locals {
  a = jsondecode("{")
}
