resource "terraform_data" "a" {
  count = 2
  input = "x"

  connection {
    type = "ssh"
    host = self.output
  }

  provisioner "local-exec" {
    command = "echo ${self.id} ${count.index}"
  }

  provisioner "local-exec" {
    when       = destroy
    on_failure = continue
    command    = "echo ${self.id} ${count.index} ${path.module} ${terraform.workspace}"
    connection {
      host = self.output
    }
  }

  provisioner "file" {
    when    = create
    content = "x"
    destination = "/tmp/x"
  }

  lifecycle {
    create_before_destroy = "true"
    ignore_changes        = [input]
    postcondition {
      condition     = self.input != ""
      error_message = "Needs input."
    }
  }
}
