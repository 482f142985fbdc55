removed {
  from = terraform_data.a
  lifecycle {
    destroy = true
  }
  provisioner "local-exec" {
    command = "echo ${self.id}"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo ${local.x}"
  }
  provisioner "chef" {
    when = destroy
  }
  connection {
    host = "a"
  }
  connection {
    host = "b"
  }
}
