# A small real configuration: built-in random, local and terraform_data
# providers, a module, a for_each, a count and a sensitive output.
# Run it with ./scripts/quickstart from the repository root.

terraform {
  required_providers {
    random = { source = "hashicorp/random" }
    local  = { source = "hashicorp/local" }
  }
}

variable "environments" {
  type    = set(string)
  default = ["dev", "prod"]
}

locals {
  team = "platform"
}

module "pet" {
  source   = "./modules/pet"
  for_each = var.environments
  prefix   = "${local.team}-${each.key}"
}

resource "random_password" "db" {
  length  = 20
  special = false
}

resource "random_integer" "port" {
  min = 8000
  max = 8999
}

resource "terraform_data" "release" {
  input = {
    pets = { for env, m in module.pet : env => m.name }
    port = random_integer.port.result
  }
}

resource "local_file" "inventory" {
  filename = "${path.module}/out/inventory.txt"
  content  = <<-EOT
    team: ${local.team}
    %{~ for env, m in module.pet }
    ${env}: ${m.name}
    %{~ endfor }
    port: ${random_integer.port.result}
  EOT
}

resource "terraform_data" "replicas" {
  count = 2
  input = "replica-${count.index}-${terraform_data.release.id}"
}

output "pets" {
  value = { for env, m in module.pet : env => m.name }
}

output "inventory_file" {
  value = local_file.inventory.filename
}

output "db_password" {
  value     = random_password.db.result
  sensitive = true
}
