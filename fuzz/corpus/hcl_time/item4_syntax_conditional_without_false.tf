locals {
  a = true ? 2
}
