terraform {
  required_providers {
    random = { source = "hashicorp/random" }
    local  = { source = "hashicorp/local" }
  }
}

variable "len" {
  type    = number
  default = 8
}

resource "random_string" "s" {
  length = var.len
}

resource "random_id" "i" {
  byte_length = 4
}

data "local_file" "f" {
  filename = "${path.module}/absent.txt"
}

module "child" {
  source = "./child"
  in     = random_string.s.result
}

output "s" {
  value = random_string.s.result
}

output "id" {
  value = random_id.i.hex
}

output "content" {
  value = data.local_file.f.content
}

output "child" {
  value = module.child.out
}
