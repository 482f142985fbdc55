locals {
  a = <<EOT
hello
EOT
  bb = 2
  ccc = <<-EOT
    indented ${var.x} line
  EOT  
  d = 4
}
