resource "terraform_data" "a" {
  for_each = toset(["x"])
  provisioner "local-exec" {
    when    = destroy
    command = each.value
  }
}
