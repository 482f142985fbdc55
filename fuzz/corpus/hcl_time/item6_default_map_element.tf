variable "sizes" {
  type    = map(number)
  default = { a = "1", b = true }
}
