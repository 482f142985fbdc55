resource "terraform_data" "a" {
  provisioner "local-exec" {
    command = "true"
    _ {}
    _ {}
  }
}
