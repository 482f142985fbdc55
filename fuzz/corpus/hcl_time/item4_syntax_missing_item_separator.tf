locals {
  a = [1, 2
}
