resource "terraform_data" "a" {
  provider = my--cloud
}
