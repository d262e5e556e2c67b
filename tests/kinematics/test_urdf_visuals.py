"""A URDF's <visual> elements as the parser reads them (the headset draws them: viewer/link_meshes.py), and the
errors of a malformed one, each naming the file, the link and the field."""

import pytest

from teledex_lerobot.kinematics import UrdfError, parse_urdf
from teledex_lerobot.kinematics.urdf import VisualSpec

JOINT = """<joint name="j" type="revolute"><parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1"/></joint>"""


def urdf(base_visuals: str) -> str:
    return f'<robot name="r"><link name="base">{base_visuals}</link><link name="tip"/>{JOINT}</robot>'


def test_every_shape_with_its_origin_size_and_file():
    description = parse_urdf(urdf("""
        <visual><origin xyz="0 0 0.05" rpy="0 0 1.5"/><geometry><box size="0.1 0.2 0.3"/></geometry>
          <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material></visual>
        <visual><geometry><cylinder radius="0.04" length="0.1"/></geometry></visual>
        <visual><geometry><sphere radius="0.02"/></geometry></visual>
        <visual><geometry><mesh filename="package://vendor/meshes/base.STL" scale="0.001 0.001 0.001"/></geometry>
        </visual>
        <visual><geometry><mesh filename="../meshes/cover.obj"/></geometry></visual>
        <collision><geometry><box size="1 1 1"/></geometry></collision>"""), source="arm.urdf")
    assert description.visuals == (
        VisualSpec("base", (0.0, 0.0, 0.05), (0.0, 0.0, 1.5), "box", (0.1, 0.2, 0.3)),
        VisualSpec("base", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "cylinder", (0.04, 0.1)),
        VisualSpec("base", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "sphere", (0.02,)),
        VisualSpec("base", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "mesh", (0.001, 0.001, 0.001),
                   "package://vendor/meshes/base.STL"),
        VisualSpec("base", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "mesh", (1.0, 1.0, 1.0), "../meshes/cover.obj"),
    )  # the collision geometry is not drawn
    assert parse_urdf(urdf("")).visuals == ()  # ours: kinematics only


@pytest.mark.parametrize("visual, message", [
    ("<visual/>", "its <geometry> must hold one of <box>, <cylinder>, <sphere> or <mesh> (found nothing)"),
    ("<visual><geometry><capsule radius='1' length='1'/></geometry></visual>", "(found <capsule>)"),
    ("<visual><geometry><box size='0.1 0.2'/></geometry></visual>", "<box size=\"0.1 0.2\"> must be three numbers"),
    ("<visual><geometry><box size='0.1 0 0.1'/></geometry></visual>", "size must be three positive edge lengths"),
    ("<visual><geometry><box/></geometry></visual>", "size must be three positive edge lengths"),
    ("<visual><geometry><cylinder radius='0.1'/></geometry></visual>", "radius and length must be given"),
    ("<visual><geometry><sphere radius='x'/></geometry></visual>", "<sphere radius=\"x\"> is not a number"),
    ("<visual><geometry><mesh/></geometry></visual>", "<mesh> has no 'filename' attribute"),
    ("<visual><geometry><mesh filename='a.stl' scale='1 1'/></geometry></visual>", "scale=\"1 1\"> must be three"),
    ("<visual><origin xyz='0 0'/><geometry><sphere radius='1'/></geometry></visual>", "xyz=\"0 0\"> must be three"),
])
def test_a_malformed_visual_names_the_file_the_link_and_the_field(visual, message):
    with pytest.raises(UrdfError) as error:
        parse_urdf(urdf(visual), source="vendor/arm.urdf")
    assert "URDF vendor/arm.urdf, link 'base' <visual>" in str(error.value)
    assert message in str(error.value)
