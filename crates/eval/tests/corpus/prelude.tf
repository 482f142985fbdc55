# Values the differential corpus refers to. Written without function
# calls so the prelude itself exercises only the language.

variable "names" {
  type    = list(string)
  default = ["alpha", "beta", "gamma"]
}

variable "settings" {
  type = object({
    size    = number
    tags    = optional(map(string), { team = "core" })
    enabled = optional(bool, true)
    note    = optional(string)
  })
  default = { size = 2 }
}

variable "servers" {
  type = list(object({
    name = string
    port = optional(number, 80)
  }))
  default = [{ name = "a" }, { name = "b", port = 8080 }]
}

variable "count_n" {
  type    = number
  default = "3"
}

variable "password" {
  type      = string
  default   = "hunter2"
  sensitive = true
}

variable "anything" {
  default = { k = [1, "two"] }
}

variable "nothing" {
  type    = string
  default = null
}

locals {
  people = [{ name = "ann", age = 30 }, { name = "bob", age = 40 }, { name = "cy", age = 25 }]
  m      = { one = 1, two = 2, three = 3 }
  nested = { a = { b = [1, 2, { c = "deep" }] } }
  greeting = "hello, ${var.names[0]}"
  total  = local.m.one + local.m.two + local.m.three
  by_name = { for p in local.people : p.name => p }
  adults = [for p in local.people : p.name if p.age >= 30]
}
