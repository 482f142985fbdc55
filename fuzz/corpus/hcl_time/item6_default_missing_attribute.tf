variable "settings" {
  type    = object({ name = string, size = number })
  default = { name = "a" }
}
