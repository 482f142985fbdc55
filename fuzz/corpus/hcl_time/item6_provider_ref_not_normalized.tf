resource "terraform_data" "a" {
  provider = Terraform.other
}
