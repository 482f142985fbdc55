variable "settings" {
  type = object({
    name = string
    size = object({ cpu = number })
  })
  default = {
    name = "a"
    size = { cpu = "many" }
  }
}
