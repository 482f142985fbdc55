variable "prefix" {
  type = string
}

resource "terraform_data" "bucket" {
  input = "${var.prefix}-bucket"

  provisioner "local-exec" {
    when    = destroy
    command = "echo bucket >> teardown-${split("-", self.input)[0]}.log"
  }
}

output "bucket" {
  value = terraform_data.bucket.output
}
