locals {
  a = 1 +
}
