resource "terraform_data" "a" {
  provisioner "local-exec" {
    command = "true"
    lifecycle {
      create_before_destroy = true
    }
  }
}
