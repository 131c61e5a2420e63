// vigil ui's analysis page (docs/ui.md): the model workbench (vigil ui BASE OTHER) or the
// network browser (vigil ui NETS_DIR), whichever the server was started with.
import { get } from '../api.js';
import { setupModels } from './models.js';
import { setupNets } from './nets.js';

async function main() {
  const v = await get('view');
  const view = document.getElementById(v.view === 'models' ? 'models-view' : 'nets-view');
  view.hidden = false;
  if (v.view === 'models') await setupModels(v);
  else await setupNets(v);
  document.body.dataset.ready = '1';
}

main().catch((e) => {
  console.error(e);
  document.body.dataset.ready = 'error';
});
