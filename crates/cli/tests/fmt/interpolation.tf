locals {
  a = "${var.x}"
  b = "prefix-${var.x}"
  c = "${var.x}${var.y}"
  d = "${ upper(var.x) }"
  e = "${
    var.x ? "y" : "n"
  }"
  f = "${"${var.x}"}"
  g = { k = "${var.x}" }
  h = "%{ if var.x }yes%{ else }no%{ endif }"
  i = "${~ var.x ~}"
  j = "$${literal} %%{literal}"
  k = "a ${ var.b+1 } b"
}
