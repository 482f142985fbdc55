resource "terraform_data" "a" {
  provisioner "local-exec" {
    command = "true"
    connection {
      host = "a"
    }
    connection {
      host = "b"
    }
  }
}
