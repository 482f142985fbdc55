variable "x" {
  default = "hello"
}
output "o" {
  value = { a = 1, b = "two", c = [1, 2] }
}
variable "s" {
  default   = "secret"
  sensitive = true
}
variable "y" {
  default = "hello"
}
