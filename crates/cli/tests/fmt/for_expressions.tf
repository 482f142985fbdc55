locals {
  a = [for x in var.list: x*2 if x>0]
  b = {for k,v in var.map: k=>v...}
  c = [for x in [1,2]: x]
  d = {
    for k, v in var.map :
    k => upper(v)
  }
}
