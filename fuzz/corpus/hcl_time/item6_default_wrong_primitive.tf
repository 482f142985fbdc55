variable "port" {
  type    = number
  default = "eighty"
}
