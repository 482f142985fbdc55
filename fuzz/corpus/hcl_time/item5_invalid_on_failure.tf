resource "terraform_data" "a" {
  provisioner "local-exec" {
    on_failure = ignore
    command    = "true"
  }
}
