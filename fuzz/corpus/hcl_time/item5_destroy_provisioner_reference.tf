resource "terraform_data" "a" {
  for_each = toset(["x"])
  provisioner "local-exec" {
    when    = destroy
    command = "echo ${self.id} ${each.key} ${path.module} ${terraform_data.b.id}"
  }
}

resource "terraform_data" "b" {}
