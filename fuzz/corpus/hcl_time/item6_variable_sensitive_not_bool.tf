variable "secret" {
  sensitive = "123"
}
