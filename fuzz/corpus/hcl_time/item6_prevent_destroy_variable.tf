variable "protect" {
  type    = bool
  default = true
}

resource "terraform_data" "a" {
  lifecycle {
    prevent_destroy = var.protect
  }
}
