variable "in" {
  type = string
}

resource "random_pet" "p" {
  prefix = var.in
}

output "out" {
  value = random_pet.p.id
}
