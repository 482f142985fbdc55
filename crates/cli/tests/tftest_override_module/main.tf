module "child" {
  source = "./child"
}
output "child_name" {
  value = module.child.name
}
output "child_id" {
  value = module.child.id
}
