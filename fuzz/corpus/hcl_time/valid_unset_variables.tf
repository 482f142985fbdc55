variable "settings" {
  type = object({
    name = string
    size = optional(number, 1)
  })
}

variable "names" {
  type = list(string)
  validation {
    condition     = length(var.names) > 0
    error_message = "At least one name."
  }
}

resource "terraform_data" "a" {
  input = "${var.settings.name}-${join(",", var.names)}"
}
