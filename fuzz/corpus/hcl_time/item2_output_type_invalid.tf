output "o" {
  type  = lisst(string)
  value = []
}

output "p" {
  type  = "string"
  value = "x"
}
