variable "name" {
  type = string
}

resource "terraform_data" "d" {
  input = var.name
}

output "name" {
  value = terraform_data.d.input
}
