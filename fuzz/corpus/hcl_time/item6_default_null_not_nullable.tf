variable "name" {
  type     = string
  nullable = false
  default  = null
}
