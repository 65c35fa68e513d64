"""Run cloud-init's own user-data processing on a blob and print the result as JSON.

Usage: python3 cloud_init_user_data.py <workdir> <instance-data.json> < user-data

What cloud-init does at boot with user data, minus the datasource: UserDataProcessor turns the blob
into one MIME message (MIME sniffing, part typing); the default part handlers (cloud-config with
merge_how, Jinja with instance data, shell scripts, boothooks) consume it in order, exactly as
cloudinit.stages.Init._default_handlers wires them. Prints
{"cloud_config": <merged config>, "scripts": [names in the scripts dir], "warnings": [...]}.
"""
import json
import logging
import os
import sys

import yaml
from cloudinit import handlers, helpers, user_data
from cloudinit.handlers.boot_hook import BootHookPartHandler
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.handlers.jinja_template import JinjaTemplatePartHandler
from cloudinit.handlers.shell_script import ShellScriptPartHandler
from cloudinit.handlers.shell_script_by_frequency import ShellScriptByFreqPartHandler
from cloudinit.settings import PER_ALWAYS, PER_INSTANCE, PER_ONCE


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append("%s: %s" % (record.name, record.getMessage()))


class Datasource:
    """Just enough of a datasource for Paths.get_ipath and the boothook handler."""

    def __init__(self, instance_id):
        self.instance_id = instance_id

    def get_instance_id(self):
        return self.instance_id


def main(workdir, instance_data_path):
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    logging.getLogger().setLevel(logging.DEBUG)
    for h in logging.getLogger().handlers:
        if h is not warnings:
            h.setLevel(logging.WARNING)

    with open(instance_data_path) as f:
        instance_data = json.load(f)
    ds = Datasource(instance_data["v1"]["instance_id"])
    paths = helpers.Paths({"cloud_dir": os.path.join(workdir, "cloud"), "run_dir": os.path.join(workdir, "run")}, ds=ds)
    os.makedirs(paths.get_ipath_cur(), exist_ok=True)
    os.makedirs(paths.run_dir, exist_ok=True)
    with open(paths.get_runpath("instance_data_sensitive"), "w") as f:
        json.dump(instance_data, f)

    blob = sys.stdin.buffer.read()
    message = user_data.UserDataProcessor(paths).process(blob)

    opts = {"paths": paths, "datasource": ds}
    cloud_config = CloudConfigPartHandler(**opts)
    shell_script = ShellScriptPartHandler(**opts)
    defaults = [
        cloud_config,
        shell_script,
        ShellScriptByFreqPartHandler(PER_ALWAYS, **opts),
        ShellScriptByFreqPartHandler(PER_INSTANCE, **opts),
        ShellScriptByFreqPartHandler(PER_ONCE, **opts),
        BootHookPartHandler(**opts),
        JinjaTemplatePartHandler(**opts, sub_handlers=[cloud_config, shell_script]),
    ]
    content = helpers.ContentHandlers()
    for mod in defaults:
        content.register(mod, overwrite=False)
    initialized = []
    for _ctype, mod in content.items():
        if mod not in initialized:
            handlers.call_begin(mod, None, PER_INSTANCE)
            initialized.append(mod)
    part_data = {
        "handlers": content,
        "handlerdir": paths.get_ipath("handlers"),
        "data": None,
        "frequency": PER_INSTANCE,
        "handlercount": 0,
        "excluded": [],
    }
    handlers.walk(message, handlers.walker_callback, data=part_data)
    for mod in initialized:
        handlers.call_end(mod, None, PER_INSTANCE)

    config_path = paths.get_ipath("cloud_config")
    merged = None
    if os.path.exists(config_path):
        with open(config_path) as f:
            merged = yaml.safe_load(f.read())
    scripts_dir = paths.get_ipath_cur("scripts")
    scripts = sorted(os.listdir(scripts_dir)) if os.path.isdir(scripts_dir) else []
    json.dump({"cloud_config": merged, "scripts": scripts, "warnings": warnings.messages}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
