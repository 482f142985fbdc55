locals {
  1 = 2
}
