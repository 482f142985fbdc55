resource "terraform_data" "a" {
  provisioner "salt-masterless" {
    local_state_tree = "/srv/salt"
  }
}
