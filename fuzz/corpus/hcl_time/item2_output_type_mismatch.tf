output "d" {
  type  = map(number)
  value = { k = "nope" }
}

output "e" {
  type  = object({ x = number, y = optional(string, "d") })
  value = { x = "5" }
}
