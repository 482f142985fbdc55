variable "port" {
  validation {
    condition     = true
    error_message = "Must be true."
  }
}
