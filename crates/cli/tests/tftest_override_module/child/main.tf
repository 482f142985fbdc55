resource "terraform_data" "d" {
  input = "real"
}
output "name" {
  value = terraform_data.d.output
}
output "id" {
  value = terraform_data.d.id
}
