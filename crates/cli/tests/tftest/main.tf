variable "name" {
  type    = string
  default = "world"

  validation {
    condition     = length(var.name) > 2
    error_message = "The name is too short."
  }
}

variable "count_n" {
  type    = number
  default = 1
}

variable "secret" {
  type      = string
  default   = "s3cret"
  sensitive = true
}

variable "limit" {
  type    = number
  default = 10
}

locals {
  greeting = "hello ${var.name}"
}

resource "terraform_data" "d" {
  input = local.greeting
}

resource "terraform_data" "many" {
  count = var.count_n
  input = count.index
}

resource "terraform_data" "bounded" {
  input = var.limit

  lifecycle {
    precondition {
      condition     = var.limit < 100
      error_message = "The limit is too high."
    }
  }
}

output "greeting" {
  value = terraform_data.d.output
}

output "count" {
  value = length(terraform_data.many)
}

output "secret" {
  value     = var.secret
  sensitive = true
}

output "checked" {
  value = var.limit

  precondition {
    condition     = var.limit != 42
    error_message = "The limit must not be 42."
  }
}

check "limit_is_small" {
  assert {
    condition     = var.limit < 50
    error_message = "The limit is not small."
  }
}
