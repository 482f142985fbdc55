variable "prefix" {
  type = string
}

variable "bucket" {
  type    = string
  default = "none"
}

resource "terraform_data" "app" {
  input = "${var.prefix}-app-${var.bucket}"

  provisioner "local-exec" {
    when    = destroy
    command = "echo app >> teardown-${split("-", self.input)[0]}.log"
  }
}

output "app" {
  value = terraform_data.app.output
}
