variable "v" {
  default = "1"
}

terraform {
  provider_meta "aws" {
    module_name = "x-${var.v}"
    version     = lower("A")
  }
}
