locals {
  user = "admin"
}

resource "terraform_data" "a" {
  connection {
    host = self.output
    user = local.user
  }

  provisioner "local-exec" {
    when    = destroy
    command = "true"
  }
}
