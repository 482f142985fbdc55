locals {
  host = "example.com"
}

resource "terraform_data" "a" {
  provisioner "remote-exec" {
    when   = destroy
    inline = ["true"]
    connection {
      host = local.host
    }
  }
}
