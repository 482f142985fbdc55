locals {
  a = jsonencode({
      name = "x"
    list = [1,2,
      3]
  })
  b = templatefile("${path.module}/t.tpl", { a = 1, bb = 2 })
  c = join(",", [for s in var.l : upper(s)])
  d = <<-EOT
    %{ for x in var.l ~}
    item ${ x }
    %{ endfor ~}
  EOT
  e = trimspace(<<EOT
  keep   this
EOT
  )
  f = { "a b" = 1, c = 2 }
  g = {
    a = 1,
    bb = 2,
  }
  h = var.x != null ? var.x : "dëfault" # ünïcode   comment
  ĩdent = 3
  i = [
    # leading comment
    1, # one
    22, # twenty-two
  ]
  j = a.b.c[0]["k"].*.d
  k = -var.n * -2
  l = !var.a && !var.b
  m = (var.a)
  n = try(var.a, null)
  o = "${var.a} ${var.b}"
  p = "x" == "y"
  q = 1.5e-3
}

resource "x" "y" {
  count = 2
  dynamic "block" {
    for_each = var.list
    content {
      name = block.value
      x = 1
    }
  }
  lifecycle {
    ignore_changes = [tags,]
    create_before_destroy = true
  }
  depends_on = [a.b,
    c.d]
}
