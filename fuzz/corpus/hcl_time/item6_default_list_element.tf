variable "names" {
  type    = list(string)
  default = ["a", {}]
}
