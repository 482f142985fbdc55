resource "terraform_data" "a" {
  provisioner "local-exec" {
    when    = later
    command = "true"
  }
}
