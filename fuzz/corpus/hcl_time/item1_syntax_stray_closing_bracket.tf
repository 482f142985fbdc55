locals {
  a = 1)
}

locals {
  b = 1
}
