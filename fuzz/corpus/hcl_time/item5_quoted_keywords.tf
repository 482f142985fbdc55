resource "terraform_data" "a" {
  provisioner "local-exec" {
    when       = "destroy"
    on_failure = "continue"
    command    = "true"
  }
}
