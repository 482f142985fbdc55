resource "local_file" "env" {
  filename = "${path.module}/env"
  content  = <<EOT
FOO=bar
  BAZ = qux   
x=1
EOT
}

locals {
  flush = <<-EOT
    FOO=bar
      nested=deeper
    EOT
}
