resource "terraform_data" "a" {
  provisioner {
    command = "true"
  }
}
